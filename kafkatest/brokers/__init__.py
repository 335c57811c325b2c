"""Broker backends behind one interface (see `base.Broker`)."""
