"""What both chat front ends share to deliver a debate within the platform's rate limits."""
