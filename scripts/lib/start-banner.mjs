// What `npm start` prints once Hookbase listens: where everything is, and a quickstart.

/**
 * What the banner shows of the admin token: a token npm start generated is shown (it is this
 * checkout's own), one the operator supplied never is (it may be a production secret).
 */
export function shownAdminToken(token, generated) {
  return generated
    ? { line: `${token}   (generated, kept in .data/admin-token)`, shell: token }
    : { line: 'from HOOKBASE_ADMIN_TOKEN (not shown)', shell: '"$HOOKBASE_ADMIN_TOKEN"' };
}

export function banner(url, grpc, token, generated, infra) {
  const api = `${url}/api`;
  const shown = shownAdminToken(token, generated);
  return `
────────────────────────────────────────────────────────────────────────────
 Hookbase is running
   API and ingest   ${url}        (health: ${url}/health)
   gRPC ingest      ${grpc ?? 'off'}   (hookbase.v1.Ingest, proto/hookbase/v1/ingest.proto)
   Kafka            ${infra.kafkaBrokers}
   PostgreSQL       ${infra.databaseUrl.replace(/:[^:@/]+@/, ':***@')}
   Dashboard        ${url}/dashboard/   (sign in with the admin token below)
   Documentation    ${url}/docs/        (guides, and the API reference from /openapi.json)
   Admin token      ${shown.line}
   Private targets  allowed (HOOKBASE_ALLOW_PRIVATE_TARGETS=true, for local receivers)

 Quickstart (another terminal):
   npm run receiver                      # a local webhook receiver on :4000
   ADMIN=${shown.shell}
   ORG=$(curl -s -X POST ${api}/organizations -H "Authorization: Bearer $ADMIN" \\
          -H 'content-type: application/json' -d '{"name":"Acme","plan":"pro"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.id')
   KEY=$(curl -s -X POST ${api}/organizations/$ORG/api-keys -H "Authorization: Bearer $ADMIN" \\
          | node -pe 'JSON.parse(require("fs").readFileSync(0)).data.key')
   curl -s -X POST ${api}/organizations/$ORG/webhook-endpoints -H "Authorization: Bearer $KEY" \\
        -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:4000/hooks"}'
   curl -s -X POST ${url}/v1/events -H "Authorization: Bearer $KEY" \\
        -H 'content-type: application/json' -d '{"eventType":"order.created","payload":{"id":1}}'
   curl -s "${api}/organizations/$ORG/messages" -H "Authorization: Bearer $KEY"
 Stop with Ctrl-C (Kafka and PostgreSQL keep running: npm run infra:down).
────────────────────────────────────────────────────────────────────────────`;
}
