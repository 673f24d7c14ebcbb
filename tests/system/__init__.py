"""Whole processes under the faults a real table meets: kills, full disks, clock steps, floods."""
