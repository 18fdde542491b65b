from .gateway import refund_all
