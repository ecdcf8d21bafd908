-- The live streams (server-sent events) open across the cluster, one row a stream, so that the
-- limit of streams a person or key holds at once counts every node and HTTP worker, not one
-- process. A node renews its rows' expiry while their streams are open and deletes a row when its
-- stream closes; a node that dies without closing leaves rows that stop counting once expired.
create table live_streams (
  id uuid primary key,
  client text not null,
  node text not null,
  expires_at timestamptz not null
);
create index live_streams_client on live_streams (client, expires_at);
create index live_streams_expires on live_streams (expires_at);
