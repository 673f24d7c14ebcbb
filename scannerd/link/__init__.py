"""The table's link to the broker: the publisher, the request path, the link's log lines, the
embedded broker, and the ``[mqtt]`` section.
"""
