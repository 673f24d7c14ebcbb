"""What every section of the config file stands on: the section base, durations with a range,
secrets by file or credential, and problems worded for the technician.
"""
