"""The daemon and the process around it: config, logs, the service shell, the shoe's alarm."""
