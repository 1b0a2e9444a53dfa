# The two commands of the README: `make check-spec` and `make test`.
VENV ?= .venv
.PHONY: check-spec test venv
check-spec:
	@scripts/venv.sh
	$(VENV)/bin/grader check-spec
test:
	@scripts/venv.sh test
	$(VENV)/bin/python -m pytest -q
