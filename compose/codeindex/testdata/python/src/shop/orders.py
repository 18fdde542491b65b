import logging

import requests

from . import cart as carts
from .payments.gateway import charge, Gateway
from .payments import *

log = logging.getLogger(__name__)


def place_order(c: "carts.Cart", gw: Gateway) -> str:
    """Place an order: charge the cart's total and return the receipt id."""
    amount = c.total()
    receipt = charge(gw, amount)
    refund_all()
    carts.discount(c)
    unknown_helper()
    return receipt


def cancel(receipt):
    requests.post("https://example.invalid", data=receipt)
    return Gateway().refund(receipt)
