from typing import List

from .models import Point

Points = List[Point]
