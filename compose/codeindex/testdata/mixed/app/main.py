from app.core import price


def main():
    print(price(3))
