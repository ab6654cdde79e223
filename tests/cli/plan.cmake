# recycle plan
