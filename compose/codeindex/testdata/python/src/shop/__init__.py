"""A small shop: carts, orders and payments."""
from .cart import Cart
from .orders import place_order

__all__ = ["Cart", "place_order"]
