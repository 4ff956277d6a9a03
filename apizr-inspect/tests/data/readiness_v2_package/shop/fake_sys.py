platform = "win32"
