open("/nonexistent/apizr-interp-fixture")
