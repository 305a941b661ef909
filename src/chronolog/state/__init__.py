"""Service state as explicit data: the encoding (``codec``), snapshots of a
stage (``snapshot``), where state is kept (``store``) and how it is read back
from a changelog topic (``recovery``).  Nothing stored is ever unpickled."""
