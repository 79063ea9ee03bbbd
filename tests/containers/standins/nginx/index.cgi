#!/bin/sh
# The first request finds the server still starting (503), every later one ready (200).
if mkdir /tmp/nginx-started 2>/dev/null; then
  printf 'Status: 503 Service Unavailable\r\nContent-Type: text/plain\r\n\r\nstarting\n'
else
  printf 'Content-Type: text/plain\r\n\r\nok\n'
fi
