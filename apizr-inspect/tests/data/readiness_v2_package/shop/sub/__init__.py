import os

os.environ["SHOP_SUB"] = "1"
