from ns import other
