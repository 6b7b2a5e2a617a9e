"""Helpers the tests share: env builders and actions (``env``), the PaddockJS golden runs (``golden``),
an independent sensing oracle (``sense_oracle``), a kinematic reference tick (``kinematic``), a car
driven into the barrier (``barrier``), worker-process plumbing (``worker``), an oracle of the observation
vector (``vector_oracle``), a WebSocket client of the preview stream (``preview_client``) and the viewer
page's pixels (``viewer_page``)."""
