"""``python -m ragbench.answers``: answer quality on a real-document answer set (see ``answer_set`` and ``scoring``)."""
