"""The publisher and the broker link, against a real Mosquitto."""
