"""Adapters for RL trainers: SkyRL-Gym (:mod:`phonebench.adapters.skyrl`) and verl
(:mod:`phonebench.adapters.verl`), plus the text helpers both share (:mod:`phonebench.adapters.text`).

Neither trainer is a dependency: each adapter subclasses the trainer's base class when it is
importable, and a local base with the same interface otherwise.
"""
