solve linear:4 --budget 4 --csv - --no-header --quiet
