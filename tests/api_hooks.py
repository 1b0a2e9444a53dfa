"""Test-only handlers for the API's time-limit tests: checks that never finish. They reach a
check process only because a test hands them to it (monkeypatching grader.api's handler
factory in the test process and putting this folder on the workers' PYTHONPATH); no answer
and no bank can name them."""
import signal
import time

from grader.grade.check import Checker


class Sleepy(Checker):
    """A check that sleeps a minute (an alarm interrupts the sleep)."""

    def check(self, payload):
        time.sleep(60)
        return super().check(payload)


class Deaf(Checker):
    """A check that blocks the alarm's signal, then sleeps: only a kill from outside ends it."""

    def check(self, payload):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGXCPU})
        time.sleep(60)
        return super().check(payload)
