HTTP/1.1 401 Unauthorized
x-request-id: 113ef1a4-7c86-4de7-856d-6b4275c54a93
www-authenticate: Bearer realm="sluice"
content-type: application/json; charset=utf-8
content-length: 68
Date: Sat, 28 Nov 2026 11:21:02 GMT
Connection: keep-alive
Keep-Alive: timeout=72

