module tws.local/bench-receiver

go 1.22
