solve linear:4 --budget 5 --strategy checkpoint-all
