def fine():
    return 1

def broken(:
    pass

def after():
    return fine()
