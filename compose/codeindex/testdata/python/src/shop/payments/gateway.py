"""Talks to the payment provider."""


class Gateway:
    def __init__(self, url="https://pay.invalid"):
        self.url = url

    def refund(self, receipt):
        return self._post(receipt)

    def _post(self, body):
        return body


def charge(gw, amount):
    """Charge an amount. Returns a receipt."""
    return gw._post(amount)


def refund_all():
    g = Gateway()
    return g
