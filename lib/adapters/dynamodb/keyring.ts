import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type Keyring, KeyringChangedError, type PublicKeyring } from '#lib/domain/keyring';
import type { KeyringStore } from '#lib/domain/ports';
import { dynamoCall } from './errors';
import { conditionalWrite, DynamoTable } from './table';

/** The one item of the ID token keyring in the signing keys table. */
const ID_TOKEN_KEYRING = 'id-token';

/**
 * The keyring in DynamoDB: one item, written whole and conditionally on the version it replaces. The
 * public halves and the sealed values are separate attributes, so discovery reads the former alone.
 */
export class DynamoKeyringStore extends DynamoTable implements KeyringStore {
  async read(): Promise<Keyring | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { keyringId: ID_TOKEN_KEYRING },
          ConsistentRead: true,
        }),
      ),
    );
    if (!Item) return undefined;
    const { keyringId: _, ...keyring } = Item;
    return keyring as Keyring;
  }

  async readPublic(): Promise<PublicKeyring | undefined> {
    const { Item } = await dynamoCall(() =>
      this.db.send(
        new GetCommand({
          TableName: this.tableName,
          Key: { keyringId: ID_TOKEN_KEYRING },
          ConsistentRead: true,
          // `keys` is a reserved word.
          ProjectionExpression: '#version, #keys',
          ExpressionAttributeNames: { '#version': 'version', '#keys': 'keys' },
        }),
      ),
    );
    return Item as PublicKeyring | undefined;
  }

  async replace(keyring: Keyring, previousVersion: number | undefined): Promise<Keyring> {
    const written: Keyring = { ...keyring, version: (previousVersion ?? 0) + 1 };
    const stored = await conditionalWrite(
      this.db,
      new PutCommand({
        TableName: this.tableName,
        Item: { keyringId: ID_TOKEN_KEYRING, ...written },
        ...(previousVersion === undefined
          ? { ConditionExpression: 'attribute_not_exists(keyringId)' }
          : {
              ConditionExpression: '#version = :previous',
              ExpressionAttributeNames: { '#version': 'version' },
              ExpressionAttributeValues: { ':previous': previousVersion },
            }),
      }),
    );
    if (!stored) throw new KeyringChangedError();
    return written;
  }
}
