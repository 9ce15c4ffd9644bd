solve linear:4 --budget 6 --strategy checkpoint-all --plan - --plan-format text
