SESSION = 'fx:sess:'
