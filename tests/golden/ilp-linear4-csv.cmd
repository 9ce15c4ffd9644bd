solve linear:4 --budget 4 --strategy ilp --csv - --no-header --quiet
