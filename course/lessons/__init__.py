"""The logic behind each lesson's notebook: widgets, experiments and figures.

One module per lesson concept; a notebook only imports and calls these, so every
widget's behaviour is unit-tested without a browser. The lesson readings
(``NN-name.md``) live beside them and are rendered by the course build.
"""
