module example.com/webhook-receiver

go 1.22
