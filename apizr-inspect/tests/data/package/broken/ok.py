import bad
