// s3rver as a process of its own, for a host of the cluster test: ADDRESS PORT DIRECTORY BUCKET.
import S3rver from 's3rver';

const [address, port, directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address, port: Number(port), silent: true, directory, configureBuckets: [{ name: bucket as string, configs: [] }] });
await server.run();
console.log('s3 ready');
