from dataclasses import dataclass

print("importing noisy")


@dataclass
class Noise:
    level: int
