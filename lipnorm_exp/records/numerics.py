"""The numerics version: which computation a run's numbers come from.

Every new record holds :data:`NUMERICS_VERSION` beside its ``git_commit``
(:data:`lipnorm_exp.records.schema.NUMERICS`). Two records of one run id and one numerics
version computed the same thing, whatever commit made them; a record without it was made before
numerics were versioned (:func:`lipnorm_exp.records.schema.numerics_version` reads ``None``).

``tests/test_numerics.py`` pins the exact history of a few tiny runs made by this version
(``tests/golden/``).
"""

#: Bump it whenever a change alters what a run computes (a layer's arithmetic, an initialisation,
#: the order of random draws, the data a split holds, ...), add a CHANGELOG line saying why, and
#: regenerate the golden histories (``python tests/golden/regenerate.py``). Version 1: the code
#: of the first versioned records. Version 2: the attention layers sum their messages as CSR
#: sparse-dense products on the CPU (``model.message_path: auto``), and GAT takes its node score
#: terms as a matrix product; the same functions, rounded otherwise.
NUMERICS_VERSION = 2

__all__ = ["NUMERICS_VERSION"]
