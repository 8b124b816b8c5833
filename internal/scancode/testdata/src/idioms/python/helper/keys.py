def job_key(job_id):
    return 'fx:job:%s' % job_id


class Queue:
    PREFIX = 'fx:queue:'

    def __init__(self, name, connection):
        self.name = name
        self.connection = connection
