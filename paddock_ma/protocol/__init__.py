"""The JSON worker protocol: one pure dispatcher (``messages``) behind every transport.

``codec`` frames strict JSON; ``wire_names`` applies PaddockJS's naming rule (``paddockjs.naming``)
to messages, camelCase wire names <-> the Python API's snake_case names; ``messages.Dispatcher`` turns a request into its reply with no I/O; ``server`` and
``client`` carry it over NDJSON on stdin/stdout; ``compliance`` checks any transport against the
in-process dispatcher.
"""
