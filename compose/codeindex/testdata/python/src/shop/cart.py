"""Carts hold the items a customer picks."""
from dataclasses import dataclass, field
from typing import Protocol


class Priced(Protocol):
    """Anything with a price."""

    def price(self) -> int: ...


@dataclass
class Item:
    """An item of the catalogue. It has a name and a price."""

    name: str
    cents: int

    def price(self) -> int:
        return self.cents


class Cart:
    """A customer's cart."""

    def __init__(self):
        self.items = []

    def add(self, item: Item) -> None:
        """Add an item."""
        self.items.append(item)
        self._touch()

    def _touch(self):
        pass

    def total(self) -> int:
        """Total in cents."""
        return sum(i.price() for i in self.items)


class GiftCart(Cart):
    def total(self) -> int:
        return super().total() - discount(self)


def discount(cart):
    return len(cart.items)
