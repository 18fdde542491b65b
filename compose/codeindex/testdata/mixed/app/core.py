"""The Python side's core."""


def price(n):
    return n * 100
