import os
import pkg.sub.leaf
import pkg.missing
import requests.adapters as adapters
from . import sibling
