"""A skill as a framework loads it: a plain module with plain functions. Nothing here knows about airlock."""


def count(text):
    words = text.split()
    return {"words": len(words), "longest": max(words, key=len) if words else None}
