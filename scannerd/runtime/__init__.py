"""The running daemon: the table wired to its driver, store, link and listeners; the process
shell (signals, sd_notify, the instance lock); the shoe's alarm; logs; the config file assembled.
"""
