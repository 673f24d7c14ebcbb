"""What the tests share: real brokers, browsers, processes, shoes and the scripted table."""
