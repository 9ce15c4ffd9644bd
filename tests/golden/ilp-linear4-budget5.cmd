solve linear:4 --budget 5 --solver glpk --plan - --plan-format text --quiet
