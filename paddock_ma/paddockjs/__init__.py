"""PaddockJS's conventions, in one place, below the contract: its wire naming rule and exceptions
(``naming``) and its checkpoint actor format, ``paddockjs-distilled-actor-v1`` (``checkpoint``: the network,
its input with the four history features, export and an independent evaluator). The environments that
train that actor are adapters (``paddock_ma.adapters.paddockjs_actor``, ``paddockjs_actor_rllib``).
"""
