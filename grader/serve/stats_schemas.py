"""The API's models of statistics (issue 29): what /openapi.json shows of
``/problems/{id}/stats`` and ``/statistics`` (see :mod:`grader.serve.itemstats`)."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AttemptsToCorrect(BaseModel):
    learners: int = Field(description="learners who got it right at some point")
    never: int = Field(description="learners with graded attempts, none of them right")
    waiting: int = Field(0, description="learners not right so far with an answer still waiting for a person")
    mean: float | None = Field(None, description="mean attempts up to and including the first right one (1: first try)")
    median: float | None = None


class ItemFigures(BaseModel):
    learners: int = Field(description="learners with a graded score of this problem (the population of both figures)")
    mean_fraction: float | None = Field(None, description="mean of score / points, 0..1 (1: everybody right)")
    discrimination: float | None = Field(
        None, description="item-rest correlation: Pearson's r between the learner's fraction on this problem and "
                          "their total on the other problems of its assessment (or of the bank); the point-biserial "
                          "for a right/wrong item; null below 3 learners or without variance")
    group: str | None = Field(None, description="the assessment the rest is taken over; null: the whole bank")
    attempts_to_correct: AttemptsToCorrect


class WrongGroup(BaseModel):
    feedback: str
    answers: int
    learners: int
    examples: list[Any]


class ScoreCount(BaseModel):
    score: float
    learners: int


class ProblemStats(BaseModel):
    problem: str
    kind: str
    points: float
    policy: str
    answers: int
    learners: int
    correct: int
    pending: int
    mean: float | None = Field(None, description="mean score in points")
    distribution: list[ScoreCount]
    common_wrong: list[WrongGroup]
    item: ItemFigures


class StatisticsRow(ItemFigures):
    problem: str
    title: str
    kind: str | None
    points: float


class Statistics(BaseModel):
    assessment: str | None = Field(None, description="the assessment asked for; null: every problem of the bank")
    policy: str
    problems: list[StatisticsRow]
