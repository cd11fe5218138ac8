// One-shot: creates the media bucket (S3_BUCKET) on the configured S3 store if it does not exist
// yet, with the service's own settings and client (lib/config.ts), so it also proves that the
// keys the API and the worker will use can reach the bucket. Run by docker-compose.yml's
// `create-bucket` service; usable by hand against any S3-compatible store:
//   STORAGE_DRIVER=s3 S3_ENDPOINT=… S3_BUCKET=… S3_ACCESS_KEY_ID=… S3_SECRET_ACCESS_KEY=… bun deploy/create-bucket.ts
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/config.ts';

const config = loadConfig(process.env);
const s3 = config.storage.s3;
if (config.storage.driver !== 's3' || !s3.bucket) {
  console.log('create-bucket: STORAGE_DRIVER is not s3; nothing to do');
  process.exit(0);
}
const client = new S3Client({
  region: s3.region,
  ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
  forcePathStyle: s3.forcePathStyle,
  ...(s3.accessKeyId && s3.secretAccessKey ? { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } } : {}),
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

// The store may still be starting: a bounded number of tries, then fail (compose restarts us).
const deadline = Date.now() + 60_000;
for (let attempt = 1; ; attempt++) {
  try {
    await client.send(new HeadBucketCommand({ Bucket: s3.bucket }));
    console.log(`create-bucket: bucket "${s3.bucket}" exists`);
    break;
  } catch (headError) {
    let err: unknown = headError;
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404) {
      try {
        await client.send(new CreateBucketCommand({ Bucket: s3.bucket }));
        console.log(`create-bucket: created bucket "${s3.bucket}"`);
        break;
      } catch (e) {
        if (/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test((e as Error).name)) break;
        err = e;
      }
    }
    if (status === 403) {
      console.error(`create-bucket: access denied to "${s3.bucket}": check S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY`);
      process.exit(1);
    }
    if (Date.now() > deadline) {
      console.error(`create-bucket: giving up after ${attempt} tries: ${(err as Error).message}`);
      process.exit(1);
    }
    await Bun.sleep(1000);
  }
}
client.destroy();
