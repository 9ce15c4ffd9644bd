solve linear:4 --budget 5 --strategy ilp --solver glpk --plan - --plan-format text --quiet
