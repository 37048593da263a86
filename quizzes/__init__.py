"""Quiz engine and question banks for the minislurm course.

Banks (``quizzes/banks/``, built from the private authoring sources) hold
hashed answer keys; :mod:`quizzes.session` and :mod:`quizzes.widget` give
learners instant feedback in a notebook; ``quizzes grade`` records a class in a
SQLite gradebook (:mod:`quizzes.gradebook`) and signs certificates
(:mod:`quizzes.certify`) that anyone verifies offline with the issuer's public
key.  See quizzes/README.md.
"""
