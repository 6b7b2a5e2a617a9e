"""What controlled cars sense: rays, radar and lookahead (``sensors``), the surface-ray march
(``march``) over its geometry (``geometry``), and the observation vectors with their one table (``vectors``).
"""
